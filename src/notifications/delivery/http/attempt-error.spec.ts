import { errors } from 'undici';
import { classifyError } from './attempt-error';

/** The classifier on errors no loopback receiver can produce on demand (the sender specs cover the ones it can). */
describe('classifyError', () => {
  const OPENSSL_MESSAGE =
    '80CC2A1B3D7F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:' +
    '../deps/openssl/openssl/ssl/record/ssl3_record.c:354:\n';

  function opensslError(code: string, message: string, reason?: string): Error {
    return Object.assign(new Error(message), { code, library: 'SSL routines', ...(reason === undefined ? {} : { reason }) });
  }

  it('blames the response, not the receiver, when undici drops a connection over an answer it did not expect', () => {
    expect(classifyError(new errors.SocketError('bad response'), 5000)).toEqual({
      outcome: 'connect_error',
      error: 'invalid HTTP response (unexpected response)',
    });
    expect(classifyError(new errors.SocketError('other side closed'), 5000)).toEqual({
      outcome: 'connect_error',
      error: 'connection closed by the receiver',
    });
  });

  it('reads the reason out of an OpenSSL message when the error has no reason field (EPROTO)', () => {
    expect(classifyError(opensslError('EPROTO', `write EPROTO ${OPENSSL_MESSAGE}`), 5000)).toEqual({
      outcome: 'tls_error',
      error: 'TLS handshake failed: wrong version number (the port does not speak TLS, is it plain HTTP?)',
    });
  });

  it('reports an OpenSSL error it cannot read by its code, never by its message', () => {
    const result = classifyError(opensslError('ERR_SSL_SOMETHING_NEW', 'garbled ../deps/openssl/x.c:1:\n'), 5000);

    expect(result).toEqual({ outcome: 'tls_error', error: 'TLS handshake failed: ERR_SSL_SOMETHING_NEW' });
  });

  it('keeps an OpenSSL reason it has no hint for as it is', () => {
    const result = classifyError(opensslError('ERR_SSL_TLSV1_ALERT_INTERNAL_ERROR', OPENSSL_MESSAGE, 'tlsv1 alert internal error'), 5000);

    expect(result).toEqual({ outcome: 'tls_error', error: 'TLS handshake failed: tlsv1 alert internal error' });
  });

  it('cuts a long altname list so the stored error stays short', () => {
    const altnames = Array.from({ length: 200 }, (_, i) => `DNS:tenant-${i}.example.com`).join(', ');
    const reason = `Host: a.test. is not in the cert's altnames: ${altnames}`;
    const error = Object.assign(new Error(`Hostname/IP does not match certificate's altnames: ${reason}`), {
      code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      reason,
    });

    const result = classifyError(error, 5000);

    expect(result.outcome).toBe('tls_error');
    expect(result.error).toMatch(
      /^hostname does not match certificate \(Host: a\.test\. is not in the cert's altnames: DNS:tenant-0\.example\.com, .*…\)$/,
    );
    expect(result.error.length).toBeLessThanOrEqual(250);
  });

  it('caps every reason at the 512 characters of the stored error column', () => {
    const result = classifyError(Object.assign(new Error('x'.repeat(2000)), { code: 'UND_ERR_INVALID_ARG' }), 5000);

    expect(result.outcome).toBe('connect_error');
    expect(result.error).toHaveLength(512);
  });
});
