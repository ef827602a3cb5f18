#!/usr/bin/env bash
# The library as a host app installs it: the tarball packed from its generated manifest (`npm run build:library` stages it
# in dist-library/), with its dependencies and required peers only (no optional peers), then every entry require()d on the
# local Node and on each supported Node line (22 and 24, from the npm registry's `node` package), and import()ed as ES modules;
# every entry's types checked under TypeScript's four moduleResolution settings. Fails if an entry needs a
# package the host was not given, or loads an optional peer. Then its footprint: what it adds to a Nest app that already has
# the framework packages, at most MAX_ADDED_PACKAGES packages and MAX_ADDED_MB MB, none with an install script (no native build).
# With TEST_MYSQL_URL, it also boots the module on MariaDB in that host (with mysql2 and @nestjs/platform-express added).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
MAX_ADDED_PACKAGES=30
# 16 MB: with sequence numbers, ordered delivery and wake-ups the library passed 15.0 MB (2026-11-28); making ajv
# (event schemas, issue 37 §1) an optional peer is the way to shrink it again.
MAX_ADDED_MB=16
[ -f dist/index.js ] || npm run -s build 1>&2
node dist/service/scripts/library-package.js >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tarball=$(npm pack --silent --pack-destination "$work" ./dist-library | tail -n 1)
library_range() { node -p 'require("'"$repo"'/dist-library/package.json").peerDependencies["'"$1"'"]'; }

# The footprint, in a host of its own: the library's required peers (the framework) and @types/node (every TypeScript Nest
# app has it; the library's @nestjs/jwt brings @types/jsonwebtoken, which depends on it), then the tarball.
mkdir "$work/footprint"
(
  cd "$work/footprint"
  echo '{ "name": "nest-host", "version": "1.0.0", "private": true }' >package.json
  framework=$(node -e '
    const { peerDependencies: peers, peerDependenciesMeta: meta = {} } = require(process.argv[1]);
    console.log(Object.entries(peers).filter(([name]) => !meta[name]?.optional).map(([name, range]) => `${name}@${range}`).join(" "));
  ' "$repo/dist-library/package.json")
  # shellcheck disable=SC2086
  npm install --no-audit --no-fund --loglevel=error $framework "@types/node@$(node -p 'require("'"$repo"'/package.json").devDependencies["@types/node"]')" >/dev/null
  installed() { node -p 'Object.keys(require("./node_modules/.package-lock.json").packages).sort().join("\n")'; }
  installed >before.txt
  kb_before=$(du -sk node_modules | cut -f1)
  npm install --no-audit --no-fund --loglevel=error "../$tarball" >/dev/null
  installed >after.txt
  added=$(comm -13 before.txt after.txt)
  count=$(echo "$added" | grep -c .)
  kb=$(($(du -sk node_modules | cut -f1) - kb_before))
  native=$(node -e '
    const { packages } = require("./node_modules/.package-lock.json");
    const added = process.argv[1].split("\n").filter(Boolean);
    console.log(added.filter((path) => packages[path].hasInstallScript).join(" "));
  ' "$added")
  echo "package check: footprint: the library adds $count packages, $((kb / 1024)).$(((kb % 1024) * 10 / 1024)) MB to a Nest app with the framework packages (at most $MAX_ADDED_PACKAGES, $MAX_ADDED_MB MB)"
  [ -z "$native" ] || { echo "package check: packages with an install script (a native build?) added to the host: $native" >&2; exit 1; }
  [ "$count" -le "$MAX_ADDED_PACKAGES" ] || { echo "package check: the library adds more than $MAX_ADDED_PACKAGES packages:" $added >&2; exit 1; }
  [ "$kb" -le $((MAX_ADDED_MB * 1024)) ] || { echo "package check: the library adds more than $MAX_ADDED_MB MB" >&2; exit 1; }
  # Every entry's types, as a TypeScript host imports them under each moduleResolution docs/host-apps.md names.
  cp "$repo"/.ci/types-check/* .
  for resolution in node10 node16 nodenext bundler; do
    "$repo/node_modules/.bin/tsc" -p "tsconfig.$resolution.json"
  done
  echo "package check: every entry's types resolve under moduleResolution node10, node16, nodenext and bundler"
)

cd "$work"
echo '{ "name": "host-app", "version": "1.0.0", "private": true }' >package.json
started=$(date +%s)
npm install --omit=dev --no-audit --no-fund --loglevel=error "./$tarball" >/dev/null
echo "package check: installed the tarball in $(($(date +%s) - started)) s: $(npm ls --all --omit=dev --parseable | tail -n +2 | sort -u | wc -l) packages, $(du -sm node_modules | cut -f1) MB"
# A copy in the host's folder: from the repository, require() would resolve the package to itself (self-reference).
cp "$repo/.ci/require-package.cjs" "$repo/.ci/import-package.mjs" "$repo/.ci/boot-package.cjs" .
on_each_node() {
  node "$1"
  for line in 22 24; do npx --yes --loglevel=error -p "node@$line" node "$1"; done
}
on_each_node require-package.cjs
on_each_node import-package.mjs
# Then the module at work without @nestjs/swagger: the host adds its driver and HTTP platform, and boots it on MariaDB.
if [ -n "${TEST_MYSQL_URL:-}" ]; then
  npm install --omit=dev --no-audit --no-fund --loglevel=error "mysql2@$(library_range mysql2)" \
    "@nestjs/platform-express@$(library_range @nestjs/platform-express)" >/dev/null
  on_each_node boot-package.cjs
fi
