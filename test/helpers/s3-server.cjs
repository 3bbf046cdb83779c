/**
 * s3rver behind a front that verifies AWS Signature Version 4 (test/helpers/s3.ts runs this file
 * in its own process). s3rver 3.7 only checks that the access key id exists; the front checks the
 * signature itself, as S3 does — Authorization headers and presigned query strings, with the
 * presigned URL's expiry — written from the SigV4 specification with node:crypto only, so it
 * shares no code with the client under test. A request without credentials passes through
 * (s3rver serves anonymous requests), and so does one naming a key id the front does not know
 * (s3rver answers InvalidAccessKeyId).
 *
 * argv: s3rver module path, s3rver account module path, folder, bucket, access key id, secret.
 * Prints {"port": n} once listening; exits when stdin ends.
 */
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');

const [s3rverPath, accountPath, dir, bucket, id, secret] = process.argv.slice(2);
const S3rver = require(s3rverPath);
require(accountPath).DUMMY_ACCOUNT.createKeyPair(id, secret);

const hmac = (key, data) => crypto.createHmac('sha256', key).update(data, 'utf8').digest();
const sha256 = (data) => crypto.createHash('sha256').update(data, 'utf8').digest('hex');
const uriEncode = (s) => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const decode = (s) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/** Why the request's signature is wrong, or '' when it is right or absent. */
function verify(req) {
  const [rawPath, rawQuery = ''] = req.url.split('?');
  const params = rawQuery === '' ? [] : rawQuery.split('&').map((p) => {
    const at = p.indexOf('=');
    return at < 0 ? [decode(p), ''] : [decode(p.slice(0, at)), decode(p.slice(at + 1))];
  });
  const q = Object.fromEntries(params);
  let credential, signedHeaders, signature, amzDate, payloadHash;
  if (q['X-Amz-Signature'] !== undefined) {
    credential = q['X-Amz-Credential'];
    signedHeaders = q['X-Amz-SignedHeaders'];
    signature = q['X-Amz-Signature'];
    amzDate = q['X-Amz-Date'];
    payloadHash = 'UNSIGNED-PAYLOAD';
    const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate || '');
    if (!m) return 'bad X-Amz-Date';
    const signedAt = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +m[6]);
    if (Date.now() > signedAt + Number(q['X-Amz-Expires'] || 0) * 1000) return 'Request has expired';
  } else if (/^AWS4-HMAC-SHA256 /.test(req.headers.authorization || '')) {
    const a = req.headers.authorization;
    credential = (/Credential=([^,\s]+)/.exec(a) || [])[1];
    signedHeaders = (/SignedHeaders=([^,\s]+)/.exec(a) || [])[1];
    signature = (/Signature=([0-9a-f]+)/.exec(a) || [])[1];
    amzDate = req.headers['x-amz-date'];
    payloadHash = req.headers['x-amz-content-sha256'] || sha256('');
  } else {
    return '';
  }
  if (!credential || !signedHeaders || !signature || !amzDate) return 'incomplete signature';
  const [keyId, date, region, service, term] = credential.split('/');
  if (keyId !== id) return '';
  const canonicalQuery = params
    .filter(([k]) => k !== 'X-Amz-Signature')
    .map(([k, v]) => [uriEncode(k), uriEncode(v)])
    .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join('&');
  const names = signedHeaders.split(';');
  const canonicalHeaders = names.map((n) => `${n}:${String(req.headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonicalRequest = [req.method, rawPath, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = [date, region, service, term].join('/');
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), term);
  const expected = crypto.createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
  return expected === signature ? '' : 'SignatureDoesNotMatch';
}

const deny = (res, code, message) => {
  res.writeHead(403, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
};

const inner = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
inner.run().then(({ port: innerPort }) => {
  const front = http.createServer((req, res) => {
    const why = verify(req);
    if (why === 'Request has expired') return deny(res, 'AccessDenied', why);
    if (why) return deny(res, 'SignatureDoesNotMatch', `The request signature we calculated does not match the signature you provided (${why})`);
    const up = http.request({ host: '127.0.0.1', port: innerPort, method: req.method, path: req.url, headers: req.headers }, (r) => {
      res.writeHead(r.statusCode, r.headers);
      r.pipe(res);
    });
    up.on('error', () => res.destroy());
    req.pipe(up);
  });
  front.listen(0, '127.0.0.1', () => console.log(JSON.stringify({ port: front.address().port })));
  process.stdin.on('end', () => {
    front.close();
    inner.close().finally(() => process.exit(0));
  });
  process.stdin.resume();
}, (e) => {
  console.log(JSON.stringify({ error: String((e && e.message) || e) }));
  process.exit(1);
});
