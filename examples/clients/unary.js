// Unary encoding with per-item (a, b) (OUE; IDUE of Gu et al., ICDE 2020, Sec. V) for an "idue" plan.
// Reports {"bits": [bytes]}: bit j is 1 with probability a_j for the true item, b_j for the others,
// packed little-endian per byte (docs/REPORTS.md). A one-level plan is OUE-like (one a, one b).
"use strict";
const { run } = require("./common.js");

run((plan, uniform) => {
  if (plan.mechanism !== "idue") throw new Error(`plan.mechanism: must be "idue" (got ${plan.mechanism})`);
  const m = plan.domain.size;
  const labels = plan.domain.labels;
  const a = new Array(m), b = new Array(m);
  for (const level of plan.params.levels) {
    for (const item of level.items) {
      const j = labels ? labels.indexOf(item) : item;
      a[j] = level.a;
      b[j] = level.b;
    }
  }
  const bytes = Math.ceil(m / 8);
  return (user) => {
    const out = new Array(bytes).fill(0);
    for (let j = 0; j < m; j++) {
      if (uniform() < (j === user.item ? a[j] : b[j])) out[j >> 3] |= 1 << (j & 7);
    }
    return { bits: out };
  };
});
