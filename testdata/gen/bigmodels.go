//go:build ignore

// bigmodels writes the synthetic models of issue 10's scale table (model/modeltest) into a
// directory, for measuring nicc compile by hand (none are committed):
//
//	go run testdata/gen/bigmodels.go -out /tmp/big [-trees 10x4,100x6,...]
//
// trees_T_D.json for each size (T trees of depth D), and mlp_4_256_256_64_1.json with
// calib.csv, 2000 RL-CC-like rows for --target int8 --handler none --calib.
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"

	"github.com/nicc-dev/nicc/model"
	"github.com/nicc-dev/nicc/model/modeltest"
)

func main() {
	out := flag.String("out", "big", "directory to write into")
	sizes := flag.String("trees", "10x4,100x6,100x8,300x8,2000x8", "ensembles to write, TREESxDEPTH, comma-separated")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	for _, s := range strings.Split(*sizes, ",") {
		var trees, depth int
		if _, err := fmt.Sscanf(s, "%dx%d", &trees, &depth); err != nil {
			log.Fatalf("-trees %s: want TREESxDEPTH", s)
		}
		name := fmt.Sprintf("trees_%d_%d", trees, depth)
		save(*out, name, modeltest.Trees(name, modeltest.RLCCInputs, trees, depth, 1))
	}
	save(*out, "mlp_4_256_256_64_1", modeltest.MLP("mlp_4_256_256_64_1", modeltest.RLCCInputs, []int{4, 256, 256, 64, 1}, 1))
	var b strings.Builder
	b.WriteString(strings.Join(modeltest.RLCCInputs, ",") + "\n")
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		fmt.Fprintf(&b, "%g,%g,%g,%g\n", 0.8+0.4*rng.Float64(), 10*rng.Float64()-1, 0.8+0.4*rng.Float64(), 10*rng.Float64()-1)
	}
	if err := os.WriteFile(filepath.Join(*out, "calib.csv"), []byte(b.String()), 0o644); err != nil {
		log.Fatal(err)
	}
}

func save(dir, name string, m *model.Model) {
	if err := modeltest.Save(filepath.Join(dir, name+".json"), m); err != nil {
		log.Fatal(err)
	}
}
