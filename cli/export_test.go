package cli

// What the tests of package cli_test call of this package's own.
var PrintError = printError
