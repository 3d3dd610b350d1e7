//go:build !race

package schedule

// raceEnabled scales the property tests down under the race detector, which slows them
// about fifteenfold; they run in full without it.
const raceEnabled = false
