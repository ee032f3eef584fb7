// A minimal indenting line writer: emitted code is plain, deterministic text.
export class Writer {
  private readonly out: string[] = [];
  private depth = 0;

  line(text = ''): this {
    this.out.push(text === '' ? '' : '  '.repeat(this.depth) + text);
    return this;
  }
  lines(texts: string[]): this {
    texts.forEach((t) => this.line(t));
    return this;
  }
  blank(): this {
    if (this.out.length && this.out[this.out.length - 1] !== '') this.out.push('');
    return this;
  }
  block(head: string, body: () => void, close = ''): this {
    this.line(`${head} {`);
    this.depth++;
    body();
    this.depth--;
    this.line(`}${close}`);
    return this;
  }
  toString(): string {
    while (this.out.length && this.out[this.out.length - 1] === '') this.out.pop();
    return this.out.join('\n') + '\n';
  }
}
