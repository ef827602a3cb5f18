import { readFileSync } from 'node:fs';

/** One case of `conformance/signature-vectors.json` (also `@funding/notification-webhooks/signature-vectors.json`). */
export interface SignatureVector {
  readonly name: string;
  readonly expected: 'accept' | 'reject';
  readonly reason: string;
  readonly secret: string;
  readonly headers: Record<string, string | undefined>;
  readonly body: { readonly base64: string };
  readonly now: number;
  readonly toleranceSeconds: number;
}

/** Runs every vector through `verify`, prints one line each, and returns the exit code: 0 when every verdict matches. */
export async function runVectors(file: string, verify: VerifyVector): Promise<number> {
  const { vectors } = JSON.parse(readFileSync(file, 'utf8')) as { vectors: SignatureVector[] };
  let failed = 0;
  for (const vector of vectors) {
    const verdict = (await verify(vector, Buffer.from(vector.body.base64, 'base64'))) ? 'accept' : 'reject';
    if (verdict !== vector.expected) failed++;
    console.log(
      `${verdict === vector.expected ? 'ok  ' : 'FAIL'} ${vector.name}: ${verdict} (expected ${vector.expected}, ${vector.reason})`,
    );
  }
  console.log(`${vectors.length - failed}/${vectors.length} vectors passed`);
  return failed === 0 ? 0 : 1;
}

type VerifyVector = (vector: SignatureVector, rawBody: Buffer) => boolean | Promise<boolean>;

/** With `--vectors <file>` on the command line: runs them, sets the exit code and returns true; else returns false. */
export function runVectorsIfAsked(verify: VerifyVector): boolean {
  const at = process.argv.indexOf('--vectors');
  if (at === -1) return false;
  void runVectors(process.argv[at + 1], verify).then((code) => (process.exitCode = code));
  return true;
}
