// Unit tests print nothing on success: console.log/info/debug from tests are dropped (jest would print
// each as a block with its stack location). console.warn/error still show. CUDA_TS_TEST_VERBOSE=1
// keeps everything. GPU suites do not use this file: their logs are the point.
if (!process.env.CUDA_TS_TEST_VERBOSE) {
  for (const method of ['log', 'info', 'debug']) console[method] = () => {};
}
