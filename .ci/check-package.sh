#!/usr/bin/env bash
# The package as a host app installs it: the `npm pack` tarball with its dependencies and required peers only (no
# devDependencies, no optional peers), then every entry require()d on the local Node and on each supported Node line (22 and
# 24, from the npm registry's `node` package). Fails if an entry needs a package the host was not given, or loads an optional peer.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
[ -f dist/index.js ] || npm run -s build 1>&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" | tail -n 1)
cd "$work"
echo '{ "name": "host-app", "version": "1.0.0", "private": true }' >package.json
started=$(date +%s)
npm install --omit=dev --no-audit --no-fund --loglevel=error "./$tarball" >/dev/null
echo "package check: installed the tarball in $(($(date +%s) - started)) s: $(npm ls --all --omit=dev --parseable | tail -n +2 | sort -u | wc -l) packages, $(du -sm node_modules | cut -f1) MB"
# A copy in the host's folder: from the repository, require() would resolve the package to itself (self-reference).
cp "$repo/.ci/require-package.cjs" .
for line in current 22 24; do
  if [ "$line" = current ]; then node require-package.cjs; else npx --yes --loglevel=error -p "node@$line" node require-package.cjs; fi
done
