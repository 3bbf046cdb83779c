import { describe, expect, it } from 'vitest';
import { RunPrinter } from '../../../src/engine/printer.js';

describe('RunPrinter spinner text', () => {
  it('names the oldest running step once it has run long enough, counting the others', () => {
    const p = new RunPrinter({ stdout: true, silent: true, color: false, spinner: true, spinnerAfterMs: 1000 });
    const t0 = Date.now();
    p.stepStart('scan', 'bash', [], true);
    p.stepStart('probe', 'bash', [], true);
    p.stepStart('probe', 'bash', [], true);
    expect(p.spinnerText(t0)).toBeUndefined();
    expect(p.spinnerText(t0 + 5000)).toMatch(/^scan running for .* \(\+2 more steps\)$/);
    p.stepSuccess('scan', 'bash', 1, '');
    expect(p.spinnerText(t0 + 5000)).toMatch(/^probe running for .* \(\+1 more step\)$/);
    p.stepFailed('probe', 'bash', 'x', []);
    p.stepSkipped('probe');
    expect(p.spinnerText(t0 + 5000)).toBeUndefined();
    p.stopSpinner();
  });

  it('tracks nothing when the spinner is off (daemon, --json)', () => {
    const p = new RunPrinter({ stdout: false, silent: false, color: false, spinner: true });
    p.stepStart('scan', 'bash', []);
    expect(p.spinnerText(Date.now() + 60_000)).toBeUndefined();
  });
});
