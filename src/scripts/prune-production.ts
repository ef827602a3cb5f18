// `npm run prune:production`, in the build stage (or a copy) of the standalone service, after `npm ci` and `npm run build`.
// Host apps provide the framework packages (peers) and never install the standalone service's own packages (the pino
// stack, terminus, Swagger, the database drivers: optional peers); this repository has both as dev dependencies. The
// service needs them at run time, so this makes every peer a production dependency of this copy (package.json is
// rewritten here), then removes every dev dependency: what is left is what `node dist/main.js` needs, and nothing else.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';

interface Manifest {
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as Manifest;
// The framework packages are peers a host provides; the standalone-only ones are optional peers. The service needs all.
const peers = Object.keys(manifest.peerDependencies ?? {});
for (const name of peers) {
  const range = manifest.devDependencies?.[name] ?? manifest.peerDependencies![name];
  manifest.dependencies = { ...manifest.dependencies, [name]: range };
  delete manifest.devDependencies?.[name];
}
writeFileSync('package.json', `${JSON.stringify(manifest, null, 2)}\n`);
console.log(`Production dependencies of the standalone service: the package's own and its peers (${peers.join(', ')})`);
execFileSync('npm', ['prune', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', ...process.argv.slice(2)], { stdio: 'inherit' });
