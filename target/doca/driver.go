package doca

import _ "embed"

// Driver is the DOCA target's host driver, built with the DOCA source against nicc's
// stand-in: it reads commands from stdin (init, contexts, DOCA events, parameter changes) and
// prints what each left, for the DOCA stage's verify.
//
//go:embed driver/doca_driver.c
var Driver []byte
