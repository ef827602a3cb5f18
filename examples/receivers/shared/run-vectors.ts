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

/** The file's `standardWebhooks.vectors`: the same fields, with `webhook-id`, `webhook-timestamp`, `webhook-signature` headers. */
export type StandardWebhooksVector = SignatureVector;

/** The file's `standardWebhooksEd25519.vectors`: `publicKey` (`whpk_…`) instead of `secret`, Standard Webhooks headers. */
export type Ed25519Vector = Omit<SignatureVector, 'secret'> & { readonly publicKey: string };

type VerifyVector<V = SignatureVector> = (vector: V, rawBody: Buffer) => boolean | Promise<boolean>;

/**
 * A verifier per scheme: `x-service` runs the file's `vectors`, `standard-webhooks` its `standardWebhooks.vectors`,
 * `ed25519` its `standardWebhooksEd25519.vectors`.
 */
export interface VectorVerifiers {
  readonly 'x-service': VerifyVector;
  readonly 'standard-webhooks': VerifyVector;
  readonly ed25519: VerifyVector<Ed25519Vector>;
}

/** Runs every vector of each scheme, prints one line each and a count per scheme; returns 0 when every verdict matches. */
export async function runVectors(file: string, verifiers: VectorVerifiers): Promise<number> {
  const document = JSON.parse(readFileSync(file, 'utf8')) as {
    vectors: SignatureVector[];
    standardWebhooks: { vectors: StandardWebhooksVector[] };
    standardWebhooksEd25519: { vectors: Ed25519Vector[] };
  };
  const failed = [
    await runScheme('x-service', document.vectors, verifiers['x-service']),
    await runScheme('standard-webhooks', document.standardWebhooks.vectors, verifiers['standard-webhooks']),
    await runScheme('ed25519', document.standardWebhooksEd25519.vectors, verifiers.ed25519),
  ];
  return failed.every((count) => count === 0) ? 0 : 1;
}

/** One scheme's vectors: one line each and a count; answers how many verdicts differed. */
async function runScheme<V extends Omit<SignatureVector, 'secret'>>(
  scheme: string,
  vectors: readonly V[],
  verifyVector: VerifyVector<V>,
): Promise<number> {
  let failed = 0;
  for (const vector of vectors) {
    const verdict = (await verifyVector(vector, Buffer.from(vector.body.base64, 'base64'))) ? 'accept' : 'reject';
    if (verdict !== vector.expected) failed++;
    console.log(
      `${verdict === vector.expected ? 'ok  ' : 'FAIL'} ${vector.name}: ${verdict} (expected ${vector.expected}, ${vector.reason})`,
    );
  }
  console.log(`${vectors.length - failed}/${vectors.length} ${scheme} vectors passed`);
  return failed;
}

/**
 * Runs `verify` with `Date.now()` at the vector's `now`: the `standardwebhooks` package reads the clock itself and has a
 * fixed 5-minute tolerance, so it can only be checked against vectors made with that tolerance.
 */
export function atClock<T>(vector: SignatureVector, verify: () => T): T {
  if (vector.toleranceSeconds !== 300) throw new Error(`${vector.name}: the standardwebhooks package's tolerance is 300 s`);
  const realNow = Date.now;
  Date.now = () => vector.now * 1000;
  try {
    return verify();
  } finally {
    Date.now = realNow;
  }
}

/** With `--vectors <file>` on the command line: runs them, sets the exit code and returns true; else returns false. */
export function runVectorsIfAsked(verifiers: VectorVerifiers): boolean {
  const at = process.argv.indexOf('--vectors');
  if (at === -1) return false;
  void runVectors(process.argv[at + 1], verifiers).then((code) => (process.exitCode = code));
  return true;
}
