package cli

// UsageError is a bad command line: the command prints it and exits 2.
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }

func (e UsageError) Unwrap() error { return e.Err }

// ExitCode is the exit code of a bad command line.
func (UsageError) ExitCode() int { return 2 }
