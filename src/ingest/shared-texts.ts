// Equal texts kept as one string. The ingest thread's visits hold their site id, pages, host and attribution for 30
// minutes after their last hit, and every hit arrives as a copy of its own (a message's structured clone): a visit
// held about 620 bytes of heap with its own copies and 355 with shared ones (docs/benchmarks.md, "Memory:
// measurements behind the code").

/** Texts longer than this are kept as they come: long ones seldom repeat, and the table's size stays bounded. */
const MAX_LENGTH = 128;

export class SharedTexts {
  private texts = new Map<string, string>();

  /** `max`: texts held at most; the table starts again empty once it is full (texts in use stay with their users). */
  constructor(private readonly max = 20_000) {}

  /** `text`, or the equal string met before it. */
  of(text: string): string {
    if (text.length > MAX_LENGTH) return text;
    const held = this.texts.get(text);
    if (held !== undefined) return held;
    if (this.texts.size >= this.max) this.texts = new Map();
    this.texts.set(text, text);
    return text;
  }

  /** Texts held now (for tests). */
  get size(): number {
    return this.texts.size;
  }
}
