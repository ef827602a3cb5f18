// `node test/support/require-commands.mjs <script> <command>…`: when a command a test script needs is not on PATH, one
// line naming it and how to install it, and exit 1 (`npm test` itself needs none of them).
import { spawnSync } from 'node:child_process';

const DEBIAN_PACKAGES = { go: 'golang', python3: 'python3', chromium: 'chromium' };
const [script, ...commands] = process.argv.slice(2);
const missing = commands.filter((command) => spawnSync('sh', ['-c', `command -v ${command}`], { stdio: 'ignore' }).status !== 0);
if (missing.length > 0) {
  const install = missing.map((command) => DEBIAN_PACKAGES[command] ?? command).join(' ');
  console.error(`npm run ${script} needs ${missing.join(' and ')} on PATH (on Debian: apt-get install ${install})`);
  process.exit(1);
}
