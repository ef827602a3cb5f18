#!/usr/bin/env bash
# The package as a host app installs it: the `npm pack` tarball with its dependencies and required peers only (no
# devDependencies, no optional peers), then every entry require()d on the local Node and on each supported Node line (22 and
# 24, from the npm registry's `node` package). Fails if an entry needs a package the host was not given, or loads an optional peer.
# With TEST_MYSQL_URL, it also boots the module on MariaDB in that host (with mysql2 and @nestjs/platform-express added).
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
cp "$repo/.ci/require-package.cjs" "$repo/.ci/boot-package.cjs" .
on_each_node() {
  node "$1"
  for line in 22 24; do npx --yes --loglevel=error -p "node@$line" node "$1"; done
}
on_each_node require-package.cjs
# Then the module at work without @nestjs/swagger: the host adds its driver and HTTP platform, and boots it on MariaDB.
if [ -n "${TEST_MYSQL_URL:-}" ]; then
  npm install --omit=dev --no-audit --no-fund --loglevel=error "mysql2@$(node -p 'require("'"$repo"'/package.json").devDependencies.mysql2')" \
    "@nestjs/platform-express@$(node -p 'require("'"$repo"'/package.json").devDependencies["@nestjs/platform-express"]')" >/dev/null
  on_each_node boot-package.cjs
fi
