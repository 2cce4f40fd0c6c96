// Numbers as the pacing tables print them, and the small statistics they need.

export function round(value: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

export function present(values: (number | null)[]): number[] {
  return values.filter((v): v is number => v !== null);
}

export function fmtMs(value: number | null): string {
  if (value === null) return '–';
  if (value >= 100) return value.toFixed(0);
  if (value >= 10) return value.toFixed(1);
  return value.toFixed(2);
}

/** MB get the same precision rule as milliseconds. */
export const fmtMb = fmtMs;

export function fmtUs(value: number | null): string {
  return value === null ? '–' : value.toFixed(0);
}

export function fmtCores(value: number | null): string {
  return value === null ? '–' : value.toFixed(2);
}

export function fmtRatio(value: number | null): string {
  return value === null ? '–' : `${value.toFixed(2)}×`;
}
