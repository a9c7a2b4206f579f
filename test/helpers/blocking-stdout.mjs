// Preloaded (--import) into every test file's process. With --test-force-exit, Node's test runner
// exits a file's process as soon as its last test ends, and on Linux a write to the stdout pipe
// that did not fit is queued and then dropped by that exit: the runner then reports fewer tests
// than ran, and a failure's name and error can go missing while the run still fails
// (nodejs/node#64833; seen here: a CI run reported 984 of 996 tests, the end of
// net-address-policy.test.ts's report lost). A blocking pipe writes each report before the exit,
// as Node already does on Windows. `_handle.setBlocking` is Node's own (libuv's) and not public:
// if it is ever gone, this does nothing and the suite runs as before.
process.stdout._handle?.setBlocking?.(true);
