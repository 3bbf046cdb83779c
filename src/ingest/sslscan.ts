/**
 * sslscan XML (`sslscan --xml=out.xml host:port`) → per `<ssltest>`: a `port` asset host:port
 * whose tls field holds the certificate and the enabled protocols, and a finding per weakness:
 * SSLv2/SSLv3 (high), TLS 1.0 (medium), TLS 1.1 (low), heartbleed (critical), insecure
 * renegotiation and TLS compression (medium), weak/NULL/anonymous ciphers (medium/high,
 * "medium"-strength ones low), and certificate problems — expired (high), not yet valid, self-signed,
 * RSA/DSA key under 2048 bits, MD5/SHA-1 signature (medium). Each finding names its evidence.
 */
import type { VulnInput } from '../store/index.js';
import type { ToolImporter, ToolRow } from './tool-import.js';
import { child, children, xmlElements, type XmlNode } from './readers.js';
import { accept, reject } from './records.js';
import { hostPort } from './ports.js';
import { isIpLiteral } from './classify.js';

type Finding = { id: string; title: string; severity: string; evidence: string; matcher?: string };

function protocolFindings(t: XmlNode): Finding[] {
  const out: Finding[] = [];
  for (const p of children(t, 'protocol')) {
    if (p.attrs.enabled !== '1') continue;
    const name = p.attrs.type === 'ssl' ? `SSLv${p.attrs.version}` : `TLSv${p.attrs.version}`;
    const evidence = `${name} accepted by the server`;
    if (p.attrs.type === 'ssl') out.push({ id: `sslscan-${name.toLowerCase()}-enabled`, title: `${name} enabled`, severity: 'high', evidence });
    else if (p.attrs.version === '1.0') out.push({ id: 'sslscan-tls10-enabled', title: 'TLS 1.0 enabled', severity: 'medium', evidence });
    else if (p.attrs.version === '1.1') out.push({ id: 'sslscan-tls11-enabled', title: 'TLS 1.1 enabled', severity: 'low', evidence });
  }
  return out;
}

function cipherFindings(t: XmlNode): Finding[] {
  const out: Finding[] = [];
  for (const c of children(t, 'cipher')) {
    const strength = c.attrs.strength ?? '';
    const name = `${c.attrs.sslversion ?? ''} ${c.attrs.cipher ?? ''} (${c.attrs.bits ?? '?'} bits)`;
    if (strength === 'null' || strength === 'anonymous') out.push({ id: 'sslscan-weak-cipher', title: `${strength === 'null' ? 'NULL' : 'Anonymous'} cipher accepted`, severity: 'high', evidence: name, matcher: name });
    else if (strength === 'weak') out.push({ id: 'sslscan-weak-cipher', title: 'Weak cipher accepted', severity: 'medium', evidence: name, matcher: name });
    else if (strength === 'medium') out.push({ id: 'sslscan-weak-cipher', title: 'Medium-strength cipher accepted', severity: 'low', evidence: name, matcher: name });
  }
  return out;
}

function certFindings(cert: XmlNode | undefined): Finding[] {
  if (!cert) return [];
  const text = (name: string) => child(cert, name)?.text.trim() ?? '';
  const out: Finding[] = [];
  const validity = `valid from ${text('not-valid-before')} to ${text('not-valid-after')}`;
  if (text('expired') === 'true') out.push({ id: 'sslscan-cert-expired', title: 'Certificate expired', severity: 'high', evidence: `subject ${text('subject')}, ${validity}` });
  if (text('not-yet-valid') === 'true') out.push({ id: 'sslscan-cert-not-yet-valid', title: 'Certificate not yet valid', severity: 'medium', evidence: `subject ${text('subject')}, ${validity}` });
  if (text('self-signed') === 'true') out.push({ id: 'sslscan-cert-self-signed', title: 'Self-signed certificate', severity: 'medium', evidence: `subject ${text('subject')}, issuer ${text('issuer')}` });
  const pk = child(cert, 'pk');
  const bits = Number(pk?.attrs.bits ?? 0);
  if (pk && (pk.attrs.type === 'RSA' || pk.attrs.type === 'DSA') && bits > 0 && bits < 2048) {
    out.push({ id: 'sslscan-weak-key', title: 'Weak certificate key', severity: 'medium', evidence: `${pk.attrs.type} ${bits} bits` });
  }
  const sig = text('signature-algorithm');
  if (/md5|sha1With/i.test(sig)) out.push({ id: 'sslscan-weak-signature', title: 'Weak certificate signature algorithm', severity: 'medium', evidence: sig });
  return out;
}

function otherFindings(t: XmlNode): Finding[] {
  const out: Finding[] = [];
  for (const h of children(t, 'heartbleed')) {
    if (h.attrs.vulnerable === '1') out.push({ id: 'sslscan-heartbleed', title: 'Heartbleed (CVE-2014-0160)', severity: 'critical', evidence: `${h.attrs.sslversion} vulnerable`, matcher: h.attrs.sslversion });
  }
  const reneg = child(t, 'renegotiation');
  if (reneg?.attrs.supported === '1' && reneg.attrs.secure === '0') out.push({ id: 'sslscan-insecure-renegotiation', title: 'Insecure renegotiation', severity: 'medium', evidence: 'renegotiation supported and not secure' });
  if (child(t, 'compression')?.attrs.supported === '1') out.push({ id: 'sslscan-tls-compression', title: 'TLS compression (CRIME)', severity: 'medium', evidence: 'TLS compression supported' });
  return out;
}

export const sslscanImporter: ToolImporter = {
  name: 'sslscan',
  input: 'XML (sslscan --xml=out.xml host:port)',
  maps: 'ssltest → port asset host:port (certificate and protocols in tls); weak protocols, ciphers, certificates, heartbleed → findings',
  reader: xmlElements('ssltest'),
  rows(record, _raw, opts) {
    const t = record.node as XmlNode;
    const host = (t.attrs.host ?? '').trim();
    const port = Number(t.attrs.port);
    if (host === '' || !Number.isInteger(port) || port <= 0) return [{ kind: 'asset', row: reject('<ssltest> without host and port') }];
    const target = hostPort(host, port);
    const cert = children(child(t, 'certificates'), 'certificate')[0];
    const certText = (name: string) => child(cert, name)?.text.trim() ?? '';
    const protocols = children(t, 'protocol').filter((p) => p.attrs.enabled === '1').map((p) => (p.attrs.type === 'ssl' ? `SSLv${p.attrs.version}` : `TLSv${p.attrs.version}`));
    const tls = cert
      ? { subject: certText('subject'), issuer: certText('issuer'), not_before: certText('not-valid-before'), not_after: certText('not-valid-after'), self_signed: certText('self-signed') === 'true', expired: certText('expired') === 'true', signature_algorithm: certText('signature-algorithm'), protocols }
      : { protocols };
    const rows: ToolRow[] = [
      { kind: 'asset', row: accept({ asset_value: target, asset_type: 'port', host_ip: isIpLiteral(host) ? host : '', open_ports: [`${port}/tcp`], tls: JSON.stringify(tls), source: opts.source }) },
    ];
    for (const f of [...protocolFindings(t), ...cipherFindings(t), ...certFindings(cert), ...otherFindings(t)]) {
      const v: VulnInput = {
        vuln_info: f.id, template_id: f.id, vuln_title: f.title, vuln_desc: `${f.title} on ${target}`, vuln_poc: f.evidence, severity: f.severity,
        confidence: 'Firm', asset_type: 'port', asset_value: target, matcher_name: f.matcher ?? '', tags: ['tls', 'sslscan'],
      };
      rows.push({ kind: 'vuln', row: accept(v) });
    }
    return rows;
  },
};
