import { formatCount } from '../format.ts';

export interface VerdictCounts {
  AUTHENTIC: number;
  SUSPICIOUS: number;
  COUNTERFEIT: number;
}

export interface VerdictPeriod {
  label: string;
  counts: VerdictCounts;
}

const verdicts = [
  { key: 'AUTHENTIC', label: 'Authentic', tone: 'authentic' },
  { key: 'SUSPICIOUS', label: 'Suspicious', tone: 'suspicious' },
  { key: 'COUNTERFEIT', label: 'Counterfeit', tone: 'counterfeit' },
] as const;

/**
 * Verdict counts per period as grouped bars: one group per period, one bar per verdict, each with
 * its number written on it. Drawn here in SVG (no chart library, nothing from elsewhere); the same
 * numbers are in the table beside it, which is what a screen reader reads.
 */
export function VerdictChart({ periods }: { periods: VerdictPeriod[] }) {
  const width = 420;
  const height = 220;
  const top = 24;
  const bottom = 40;
  const left = 8;
  const groupWidth = (width - left * 2) / periods.length;
  const barWidth = Math.min(40, (groupWidth - 16) / verdicts.length);
  const largest = Math.max(1, ...periods.flatMap((period) => verdicts.map((verdict) => period.counts[verdict.key])));
  const scale = (count: number) => (count / largest) * (height - top - bottom);
  return (
    <figure class="chart">
      <svg viewBox={`0 0 ${width} ${height}`} role="img" aria-labelledby="verdict-chart-title" class="chart-svg">
        <title id="verdict-chart-title">
          Verdicts per period:{' '}
          {periods
            .map(
              (period) =>
                `${period.label}: ${verdicts.map((verdict) => `${formatCount(period.counts[verdict.key])} ${verdict.label.toLowerCase()}`).join(', ')}`,
            )
            .join('; ')}
        </title>
        <line x1={left} x2={width - left} y1={height - bottom} y2={height - bottom} class="chart-axis" />
        {periods.map((period, groupIndex) => {
          const groupLeft = left + groupIndex * groupWidth + (groupWidth - barWidth * verdicts.length) / 2;
          return (
            <g key={period.label}>
              {verdicts.map((verdict, index) => {
                const count = period.counts[verdict.key];
                const barHeight = scale(count);
                const x = groupLeft + index * barWidth;
                const y = height - bottom - barHeight;
                return (
                  <g key={verdict.key}>
                    <rect
                      x={x + 2}
                      y={y}
                      width={barWidth - 4}
                      height={Math.max(barHeight, count > 0 ? 1 : 0)}
                      class={`bar bar-${verdict.tone}`}
                    />
                    <text x={x + barWidth / 2} y={y - 6} text-anchor="middle" class="chart-value">
                      {formatCount(count)}
                    </text>
                  </g>
                );
              })}
              <text
                x={left + groupIndex * groupWidth + groupWidth / 2}
                y={height - bottom + 24}
                text-anchor="middle"
                class="chart-label"
              >
                {period.label}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul class="legend">
          {verdicts.map((verdict) => (
            <li key={verdict.key}>
              <span class={`swatch bar-${verdict.tone}`} aria-hidden="true" /> {verdict.label}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
