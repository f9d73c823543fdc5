/**
 * A progress bar with ETA on an interactive terminal (stderr); silent when stderr is not a TTY or CI is set, so
 * pipes and logs stay clean. A total of 0 means unknown (streamed input): the bar shows a count and a rate. `detail` adds live counters (cache hits, tokens) after the ETA.
 */
export function terminalProgress(label: string, detail?: () => string): (done: number, total: number) => void {
  if (!process.stderr.isTTY || process.env.CI) return () => {};
  const start = Date.now();
  let last = 0;
  return (done, total) => {
    const now = Date.now();
    if (done < total && now - last < 100) return;
    last = now;
    if (total <= 0) {
      // Streaming input: the total is not known in advance, so show the count and the rate.
      process.stderr.write(`\r${label} ${done} (${(done / Math.max(0.001, (now - start) / 1000)).toFixed(0)}/s)${detail ? ` ${detail()}` : ''} `);
      return;
    }
    const width = 30;
    const fraction = total > 0 ? done / total : 1;
    const filled = Math.round(fraction * width);
    const elapsed = (now - start) / 1000;
    const eta = done > 0 ? (elapsed * (total - done)) / done : 0;
    process.stderr.write(`\r${label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ${done}/${total} ETA ${eta.toFixed(0)}s${detail ? ` ${detail()}` : ''} `);
    if (done >= total) process.stderr.write('\n');
  };
}
