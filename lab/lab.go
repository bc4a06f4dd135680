// Package lab is nicc's laboratory around the compile: the closed-loop simulator's glue and
// its controllers (sim, its matrix and theory), the closed-loop diff, the distill sweep, eval,
// the train glue and inspect. It reads a compile directory back through artifact.ReadReport
// (the firmware paths) or compiler.OpenCompiled (the golden model, --golden and eval DIR), and
// converts its reports to plain series for plot/.
package lab
