// The median the benchmarks report: of an even count, the upper of the two middle values (a value that was
// measured, not a mean of two).

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}
