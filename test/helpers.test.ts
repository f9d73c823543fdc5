import { expect, it } from 'vitest';
import { pyRound } from './helpers.js';
it('pyRound matches Python round() including exact ties', () => {
  expect(pyRound(0.0625, 3)).toBe(0.062);
  expect(pyRound(0.1875, 3)).toBe(0.188);
  expect(pyRound(0.25250000000000000222, 3)).toBe(0.253);
  expect(pyRound(0.55749999999999999556, 3)).toBe(0.557);
  expect(pyRound(0.5, 0)).toBe(0);
  expect(pyRound(1.5, 0)).toBe(2);
  expect(pyRound(0.12345, 4)).toBe(0.1235); // 0.12345 is 0.123450000000000004174...
});
