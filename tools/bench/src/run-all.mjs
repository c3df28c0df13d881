// Placeholder until the benchmark suites land: lists what will run.
console.log('No benchmarks yet.');
