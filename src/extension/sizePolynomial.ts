// A polynomial over a kernel's size parameters with integer coefficients (`M*K`, `K*N + 1`): what the spec
// drafter infers an array's length or a loop nest's work to be, so that `(M-1)*K + (K-1) + 1` reads `M*K`.

export class SizePolynomial {
  /** Monomial (its symbols sorted and joined by `*`, '' for the constant) -> coefficient. */
  private constructor(private readonly terms: ReadonlyMap<string, number>) {}

  static constant(c: number): SizePolynomial {
    return new SizePolynomial(new Map(c ? [['', c]] : []));
  }

  static symbol(name: string): SizePolynomial {
    return new SizePolynomial(new Map([[name, 1]]));
  }

  private static of(entries: Iterable<[string, number]>): SizePolynomial {
    const m = new Map<string, number>();
    for (const [k, v] of entries) {
      const sum = (m.get(k) ?? 0) + v;
      if (sum) m.set(k, sum);
      else m.delete(k);
    }
    return new SizePolynomial(m);
  }

  add(o: SizePolynomial): SizePolynomial {
    return SizePolynomial.of([...this.terms, ...o.terms]);
  }

  sub(o: SizePolynomial): SizePolynomial {
    return SizePolynomial.of([...this.terms, ...[...o.terms].map(([k, v]) => [k, -v] as [string, number])]);
  }

  mul(o: SizePolynomial): SizePolynomial {
    const out: [string, number][] = [];
    for (const [a, x] of this.terms) {
      for (const [b, y] of o.terms) out.push([[...a.split('*'), ...b.split('*')].filter(Boolean).sort().join('*'), x * y]);
    }
    return SizePolynomial.of(out);
  }

  /** The symbols it uses. */
  symbols(): string[] {
    return [...new Set([...this.terms.keys()].flatMap((k) => k.split('*')).filter(Boolean))].sort();
  }

  /** The constant it is, when it uses no symbol. */
  get constantValue(): number | undefined {
    return this.terms.size === 0 ? 0 : this.terms.size === 1 && this.terms.has('') ? this.terms.get('') : undefined;
  }

  /** The coefficient of one symbol alone (`K` in `i*K + k` where `i` was kept a symbol). */
  linearCoefficientOf(name: string): SizePolynomial {
    const out: [string, number][] = [];
    for (const [k, v] of this.terms) {
      const parts = k.split('*').filter(Boolean);
      const at = parts.indexOf(name);
      if (at >= 0 && parts.lastIndexOf(name) === at) out.push([parts.filter((_, i) => i !== at).join('*'), v]);
    }
    return SizePolynomial.of(out);
  }

  evaluate(values: Readonly<Record<string, number>>): number {
    let total = 0;
    for (const [k, v] of this.terms) total += v * k.split('*').filter(Boolean).reduce((p, s) => p * (values[s] ?? NaN), 1);
    return total;
  }

  equals(o: SizePolynomial): boolean {
    return this.terms.size === o.terms.size && [...this.terms].every(([k, v]) => o.terms.get(k) === v);
  }

  /** As Python over `shape["..."]` (or another naming of the symbols). */
  toPython(name: (symbol: string) => string = (s) => `shape["${s}"]`, order: readonly string[] = []): string {
    if (!this.terms.size) return '0';
    const rank = (s: string) => (order.includes(s) ? order.indexOf(s) : order.length);
    const terms = [...this.terms].sort(([a], [b]) => b.split('*').length - a.split('*').length || a.localeCompare(b));
    return terms.map(([k, v], i) => {
      const factors = k.split('*').filter(Boolean).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b)).map(name);
      const mag = Math.abs(v);
      const body = factors.length ? (mag === 1 ? factors : [String(mag), ...factors]).join(' * ') : String(mag);
      return i === 0 ? (v < 0 ? `-${body}` : body) : `${v < 0 ? ' - ' : ' + '}${body}`;
    }).join('');
  }

  /** `M*K`, the factors in the given order (the kernel's parameter order). */
  toString(order: readonly string[] = []): string {
    return this.toPython((s) => s, order).replace(/ \* /g, '*');
  }
}
