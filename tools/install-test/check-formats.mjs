// Loads each package named on the command line with `require` and with `import`, in one process, and prints what
// differs: names `import` lacks (Node finds a CommonJS module's named exports by static analysis) and exports that
// are not the same value both ways (two copies of a module). Copied into the install test's plain app and run
// there on each Node major.
import { createRequire } from 'node:module';

const require = createRequire(`${process.cwd()}/`);
const report = {};
for (const name of process.argv.slice(2)) {
  const required = require(name);
  const imported = await import(name);
  const names = Object.keys(required).filter((k) => k !== '__esModule');
  report[name] = {
    exports: names.length,
    missingFromImport: names.filter((k) => !(k in imported)),
    notIdentical: names.filter((k) => k in imported && imported[k] !== required[k]),
  };
}
console.log(JSON.stringify(report));
