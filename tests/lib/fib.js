// SPDX-License-Identifier: LGPL-2.1-or-later
// fib.js MILLISECONDS N: a JavaScript workload for the node tests; computes
// fib(N) over and over for MILLISECONDS, then prints "done".
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
const [ms, n] = process.argv.slice(2).map(Number);
const end = Date.now() + ms;
let s = 0;
while (Date.now() < end) s += fib(n);
console.log(s > 0 ? "done" : "none");
