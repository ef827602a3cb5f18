"""A Standard Webhooks verifier written from the specification (https://www.standardwebhooks.com) with Python's
standard library only: the official `standardwebhooks` package is on PyPI, which CI cannot reach.

Reads JSON cases from stdin: [{"secret", "headers", "body_base64", "now", "tolerance"}], prints one verdict per case
("accept" or "reject") as a JSON list. A case with "public_key" (whpk_...) instead of "secret" is checked with the
asymmetric scheme ("v1a,<base64 Ed25519 signature>"): the standard library has no Ed25519, so Ed25519 verification is
written out below from RFC 8032 (section 5.1.7, after its section 6 reference code). Slow and not constant-time, which a
verifier of public signatures does not need; for checking the vectors and a delivery, never for production.
"""
import base64
import hashlib
import hmac
import json
import sys


# RFC 8032, Ed25519 (edwards25519 in extended coordinates).
P = 2**255 - 19
Q = 2**252 + 27742317777372353535851937790883648493
D = -121665 * pow(121666, P - 2, P) % P
SQRT_M1 = pow(2, (P - 1) // 4, P)


def point_add(a, b):
    e, f = (a[1] - a[0]) * (b[1] - b[0]) % P, (a[1] + a[0]) * (b[1] + b[0]) % P
    g, h = 2 * a[3] * b[3] * D % P, 2 * a[2] * b[2] % P
    e, f, g, h = f - e, h - g, h + g, f + e
    return (e * f, g * h, f * g, e * h)


def point_mul(scalar, point):
    result = (0, 1, 1, 0)
    while scalar > 0:
        if scalar & 1:
            result = point_add(result, point)
        point = point_add(point, point)
        scalar >>= 1
    return result


def point_equal(a, b):
    return (a[0] * b[2] - b[0] * a[2]) % P == 0 and (a[1] * b[2] - b[1] * a[2]) % P == 0


def recover_x(y, sign):
    if y >= P:
        return None
    x2 = (y * y - 1) * pow(D * y * y + 1, P - 2, P)
    if x2 % P == 0:
        return None if sign else 0
    x = pow(x2, (P + 3) // 8, P)
    if (x * x - x2) % P != 0:
        x = x * SQRT_M1 % P
    if (x * x - x2) % P != 0:
        return None
    return P - x if (x & 1) != sign else x


def point_decompress(encoded):
    y = int.from_bytes(encoded, "little")
    sign, y = y >> 255, y & ((1 << 255) - 1)
    x = recover_x(y, sign)
    return None if x is None else (x, y, 1, x * y % P)


BASE_Y = 4 * pow(5, P - 2, P) % P
BASE_X = recover_x(BASE_Y, 0)
BASE = (BASE_X, BASE_Y, 1, BASE_X * BASE_Y % P)


def ed25519_verify(public, message, signature):
    if len(public) != 32 or len(signature) != 64:
        return False
    a, r = point_decompress(public), point_decompress(signature[:32])
    s = int.from_bytes(signature[32:], "little")
    if a is None or r is None or s >= Q:
        return False
    h = int.from_bytes(hashlib.sha512(signature[:32] + public + message).digest(), "little") % Q
    return point_equal(point_mul(s, BASE), point_add(r, point_mul(h, a)))


def verify_asymmetric(public_key, headers, body, now, tolerance):
    """v1a: space-separated "v1a,<base64 Ed25519 signature>" of b"<webhook-id>.<webhook-timestamp>." + body, checked
    with the public key whpk_ + base64 of its 32 bytes; "v1," entries are HMAC signatures, not for this key."""
    headers = {name.lower(): value for name, value in headers.items()}
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > tolerance:
        return False
    public = base64.b64decode(public_key[len("whpk_"):] if public_key.startswith("whpk_") else public_key)
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    for versioned in signatures.split(" "):
        version, _, signature = versioned.partition(",")
        if version != "v1a":
            continue
        try:
            decoded = base64.b64decode(signature, validate=True)
        except ValueError:
            continue
        if ed25519_verify(public, signed, decoded):
            return True
    return False


def verify(secret, headers, body, now, tolerance):
    headers = {name.lower(): value for name, value in headers.items()}
    msg_id = headers.get("webhook-id")
    timestamp = headers.get("webhook-timestamp")
    signatures = headers.get("webhook-signature")
    if not msg_id or not timestamp or not signatures:
        return False
    try:
        ts = int(timestamp)
    except ValueError:
        return False
    if abs(now - ts) > tolerance:
        return False
    key = base64.b64decode(secret[len("whsec_"):] if secret.startswith("whsec_") else secret)
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for versioned in signatures.split(" "):
        version, _, signature = versioned.partition(",")
        if version == "v1" and hmac.compare_digest(signature, expected):
            return True
    return False


def verdict(case):
    body = base64.b64decode(case["body_base64"])
    if "public_key" in case:
        accepted = verify_asymmetric(case["public_key"], case["headers"], body, case["now"], case["tolerance"])
    else:
        accepted = verify(case["secret"], case["headers"], body, case["now"], case["tolerance"])
    return "accept" if accepted else "reject"


cases = json.load(sys.stdin)
print(json.dumps([verdict(case) for case in cases]))
