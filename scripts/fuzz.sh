#!/bin/sh
# Runs every Go fuzz target in the module for $1 (default 60s) each; stops at the first finding.
set -eu
time=${1:-60s}
for pkg in $(go list ./...); do
  dir=$(go list -f '{{.Dir}}' "$pkg")
  for target in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //'); do
    echo "fuzz: $pkg $target for $time"
    go test -run '^$' -fuzz "^$target\$" -fuzztime "$time" "$pkg"
  done
done
NICC_REFEREE_PROGRAMS=${NICC_REFEREE_PROGRAMS:-200000} NICC_REFEREE_SEED=${NICC_REFEREE_SEED:-$(date +%s)} go test -count=1 -v -run '^TestQemuRefereeInstructions$' ./fwsim # qemu referee: more random programs, a fresh seed (logged)
