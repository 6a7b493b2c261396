// Keys and values of the crash test: round r's commit number s writes key(r, s) = value(r, s),
// one key per commit, numbered in the order the commits were issued.
export const key = (round, s) => `c${round}/${String(s).padStart(7, '0')}`;
// The bounds of round r's keys: [c<r>/, c<r>0) ('0' follows '/').
export const roundStart = (round) => `c${round}/`;
export const roundEnd = (round) => `c${round}0`;
const FILL = '0123456789abcdef'.repeat(16);
export const value = (round, s) => `r${round}:s${s}:${FILL.slice(0, 100 + (s % 150))}`;
