/** Module doc: what the skimming lexer must read right. */
export class A {
  /** Doc of m. */
  m(): boolean {
    const t = `${`}`} and ${"{"}`;
    return /}[/{]/.test(t) && 4 / 2 / 1 > 0;
  }
  n(): void {}
}

export function f(x: number): { a: number } {
  const o = { a: x, b: { c: "}" } };
  return o;
}

const g = () => {
  return typeof /{/ === "object";
};

export interface I {
  /** Doc of p. */
  p: string;
  q(): void;
}

export namespace N {
  export function inner(): number {
    return [1, 2, 3].reduce((a, b) => a + b, 0);
  }
}

export const table = [{ a: "]" }, { b: "[" }, { c: "}" }, { d: 1 }, { e: 2 }];
