// Loaded on first use, with a clear message when missing: the package lists selfsigned as an optional peer dependency.
async function loadSelfsigned(): Promise<typeof import('selfsigned')> {
  try {
    return await import('selfsigned');
  } catch {
    throw new Error("The testing kit generates its certificate with 'selfsigned': npm install --save-dev selfsigned");
  }
}

/** Name the receiver's certificate is valid for, besides IP 127.0.0.1. */
export const RECEIVER_HOSTNAME = 'receiver.test';

export interface TestCertificate {
  readonly keyPem: string;
  readonly certPem: string;
}

/**
 * A fresh self-signed EC certificate for these IPs (default 127.0.0.1), DNS {@link RECEIVER_HOSTNAME} and any further
 * `dnsNames` (wildcards such as `*.hooks.test` included).
 */
export async function generateTestCertificate(
  ips: readonly string[] = ['127.0.0.1'],
  dnsNames: readonly string[] = [],
): Promise<TestCertificate> {
  const { generate } = await loadSelfsigned();
  const pems = await generate([{ name: 'commonName', value: RECEIVER_HOSTNAME }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      {
        name: 'subjectAltName',
        altNames: [
          ...ips.map((ip) => ({ type: 7 as const, ip })),
          ...[RECEIVER_HOSTNAME, ...dnsNames].map((value) => ({ type: 2 as const, value })),
        ],
      },
    ],
  });
  return { keyPem: pems.private, certPem: pems.cert };
}
