import { existsSync, statSync } from 'node:fs';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { UsageError } from '../errors.js';

/**
 * Option parsers shared by every command: a value is checked when the command line is parsed, so a typo is a
 * usage error (exit 2) naming the option, before any file is read or any request sent.
 */

/** Repeatable option: `--x a --x b` -> ['a', 'b']. */
export const collect = (value: string, previous: string[] | undefined) => [...(previous ?? []), value];

/** Repeatable and comma-separated: `--x a,b --x c` -> ['a', 'b', 'c']. */
export const list = (value: string, previous: string[] | undefined) => [...(previous ?? []), ...value.split(',').map((s) => s.trim()).filter(Boolean)];

/** A finite number (no empty string, no `abc`, no `Infinity`) within [min, max]. */
export function numberIn(option: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const x = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(x) || x < min || x > max) throw new InvalidArgumentError(`${option} must be a number from ${min} to ${max}, got "${value}"`);
    return x;
  };
}

/** An integer within [min, max] (max bounds the work a value can ask for). */
export function integerIn(option: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const x = value.trim() === '' ? NaN : Number(value);
    if (!Number.isSafeInteger(x) || x < min || x > max) throw new InvalidArgumentError(`${option} must be an integer from ${min} to ${max}, got "${value}"`);
    return x;
  };
}

/** `--max-work`: a work bound in steps, an integer or a power of two written `2^N` (as the docs give it). */
export function workSteps(option: string) {
  return (value: string): number => {
    const power = /^\s*2\^(\d{1,2})\s*$/.exec(value);
    const x = power ? 2 ** Number(power[1]) : value.trim() === '' ? NaN : Number(value);
    if (!Number.isSafeInteger(x) || x < 1) throw new InvalidArgumentError(`${option} must be a whole number of steps from 1 to 2^53 (e.g. 2^36 or 1e11), got "${value}"`);
    return x;
  };
}

/** An http(s) URL; repeatable and comma-separated like `list`. */
export function urlList(option: string) {
  return (value: string, previous: string[] | undefined): string[] => {
    const urls = list(value, undefined);
    for (const url of urls) {
      let parsed: URL | undefined;
      try {
        parsed = new URL(url);
      } catch {
        parsed = undefined;
      }
      if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
        throw new InvalidArgumentError(`${option} must be an http(s) URL such as http://127.0.0.1:8000/v1, got "${url}"`);
      }
    }
    return [...(previous ?? []), ...urls];
  };
}

/** A path to an existing file (a typo is an error, never a literal string). */
export function existingFile(option: string) {
  return (value: string): string => {
    if (!existsSync(value)) throw new InvalidArgumentError(`${option}: file not found: ${value}`);
    if (!statSync(value).isFile()) throw new InvalidArgumentError(`${option}: not a file: ${value}`);
    return value;
  };
}

/** `--format table|json`, the same on every command. */
export const formatOption = (formats: string[] = ['table', 'json']) => new Option('--format <format>', 'output format').choices(formats).default(formats[0]);

/**
 * Options that only mean something together with another one (`meta --bins` without `--model-pairs`): given
 * alone on the command line they are usage errors, not silently ignored.
 */
export function onlyWith(command: Command, flags: string[], needed: string, active: boolean): void {
  if (active) return;
  for (const flag of flags) {
    const option = command.options.find((o) => o.long === flag);
    if (option && command.getOptionValueSource(option.attributeName()) === 'cli') throw new UsageError(`${flag} does nothing without ${needed}`);
  }
}
