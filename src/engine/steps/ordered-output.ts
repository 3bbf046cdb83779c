const DEFAULT_CAP = 4 * 1024 * 1024;

/**
 * Reassembles outputs that finish out of order into input order, keeping at most `cap` bytes in
 * memory (the rest is counted, not kept): a foreach over millions of lines stays flat in memory.
 */
export class OrderedOutput {
  private pending = new Map<number, string>();
  private nextIndex = 0;
  private parts: string[] = [];
  private size = 0;
  private truncated = false;

  constructor(private readonly cap = DEFAULT_CAP) {}

  /** Stores the output of item `i`, flushing every contiguous finished item. */
  set(i: number, output: string): void {
    this.pending.set(i, output);
    while (this.pending.has(this.nextIndex)) {
      const text = this.pending.get(this.nextIndex)!;
      this.pending.delete(this.nextIndex);
      this.nextIndex++;
      if (text === '') continue;
      if (this.size + text.length > this.cap) {
        this.truncated = true;
        continue;
      }
      this.parts.push(text);
      this.size += text.length + 1;
    }
  }

  /** Flushes what remains (items that never reported are skipped). */
  async close(): Promise<void> {
    const rest = [...this.pending.keys()].sort((a, b) => a - b);
    for (const i of rest) {
      const text = this.pending.get(i)!;
      if (text && this.size + text.length <= this.cap) {
        this.parts.push(text);
        this.size += text.length + 1;
      } else if (text) this.truncated = true;
    }
    this.pending.clear();
  }

  text(): string {
    return this.parts.join('\n') + (this.truncated ? '\n[output truncated]' : '');
  }
}
