// `node .ci/fail-on-skips.mjs <vitest json report>…`: fails, naming them, when a suite CI ran skipped or left to do any
// test (a test that failed its setup is reported skipped too): a skipped test checks nothing.
import { readFileSync } from 'node:fs';

const notRun = process.argv.slice(2).flatMap((file) =>
  JSON.parse(readFileSync(file, 'utf8')).testResults.flatMap((suite) =>
    suite.assertionResults
      .filter((test) => test.status !== 'passed' && test.status !== 'failed')
      .map((test) => `${suite.name.replace(`${process.cwd()}/`, '')} > ${test.fullName} (${test.status})`),
  ),
);
if (notRun.length > 0) {
  console.error(`${notRun.length} test(s) did not run:\n  ${notRun.join('\n  ')}`);
  process.exit(1);
}
