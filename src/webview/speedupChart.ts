// Best speedup so far over the run's time: an inline SVG step line (no chart library in the bundle).
import type { BestPoint } from '../protocol';
import { clear, s } from './dom';
import { chartGeometry } from '../runModel';

const W = 300;
const H = 120;

export class SpeedupChart {
  readonly element: SVGElement = s('svg', { viewBox: `0 0 ${W} ${H}`, class: 'speedup-chart', role: 'img', 'data-testid': 'speedup-chart' });

  render(points: readonly BestPoint[], elapsedMs: number): void {
    const g = chartGeometry(points, W, H, elapsedMs);
    clear(this.element);
    const base = 28;
    const yOf = (v: number) => H - base + 6 - (v / g.yMax) * (H - base);
    this.element.append(
      s('title', {}, points.length ? `Best speedup ${points[points.length - 1].speedup.toFixed(2)}x` : 'No correct candidate yet'),
      s('line', { x1: base, y1: yOf(0), x2: W - 6, y2: yOf(0), class: 'axis' }),
      s('line', { x1: base, y1: 6, x2: base, y2: yOf(0), class: 'axis' }),
      s('line', { x1: base, y1: yOf(1), x2: W - 6, y2: yOf(1), class: 'unity' }),
      s('text', { x: base - 4, y: yOf(1) + 3, class: 'label', 'text-anchor': 'end' }, '1x'),
      s('text', { x: base - 4, y: yOf(g.yMax / 1.1) + 3, class: 'label', 'text-anchor': 'end' }, `${(g.yMax / 1.1).toFixed(1)}x`),
      s('text', { x: W - 6, y: H - 4, class: 'label', 'text-anchor': 'end' }, `${Math.round(g.xMaxS)} s`),
      s('path', { d: g.path, class: 'best-line' }),
      ...g.points.map((p) => s('circle', { cx: p.x.toFixed(1), cy: p.y.toFixed(1), r: 2.5, class: 'best-point', 'data-id': p.id },
        s('title', {}, `${p.id}: ${p.speedup.toFixed(2)}x`))),
    );
  }
}
