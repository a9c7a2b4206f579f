import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

// One uPlot chart (loaded on demand by the usage page, so uPlot is in no other page's code).
// The canvas is decorative for assistive tech: every chart has a table with the same figures.

export interface ChartSeries {
  label: string;
  values: number[];
  color: string;
}

export default function UsageChart({
  times,
  series,
  interval,
  format,
}: {
  /** Each bucket's start (ISO). */
  times: string[];
  series: ChartSeries[];
  interval: 'hour' | 'day';
  format: (n: number) => string;
}) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const ink = getComputedStyle(el).color;
    const xs = times.map((t) => Date.parse(t) / 1000);
    const data: uPlot.AlignedData = [xs, ...series.map((s) => s.values)];
    const opts: uPlot.Options = {
      width: Math.max(280, el.clientWidth),
      height: 220,
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      cursor: { drag: { x: false, y: false } },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, max > 0 ? max * 1.1 : 1] } },
      axes: [
        {
          stroke: ink,
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          ticks: { stroke: 'rgba(128,128,128,0.3)' },
          values: interval === 'hour' ? '{HH}:{mm}' : '{MMM} {D}',
        },
        {
          stroke: ink,
          grid: { stroke: 'rgba(128,128,128,0.2)' },
          ticks: { stroke: 'rgba(128,128,128,0.3)' },
          size: 70,
          values: (_u, ticks) => ticks.map(format),
        },
      ],
      series: [
        { label: interval === 'hour' ? 'Hour (UTC)' : 'Day (UTC)' },
        ...series.map((s) => ({
          label: s.label,
          stroke: s.color,
          width: 2,
          points: { show: true, size: 6, fill: s.color },
          value: (_u: uPlot, v: number | null) => (v === null ? '—' : format(v)),
        })),
      ],
    };
    const chart = new uPlot(opts, data, el);
    const resize = new ResizeObserver(() => chart.setSize({ width: Math.max(280, el.clientWidth), height: 220 }));
    resize.observe(el);
    return () => {
      resize.disconnect();
      chart.destroy();
    };
  }, [times, series, interval, format]);
  return <div className="chart" ref={ref} aria-hidden="true" data-chart />;
}
