// k-ary randomized response (Murakami & Takahashi, TDP 2021, eq. 2) for an ldpplan "rr" plan.
// Reports {"y": item}: the true item with probability mu, else one of the other k - 1 uniformly.
"use strict";
const { run } = require("./common.js");

run((plan, uniform) => {
  if (plan.mechanism !== "rr") throw new Error(`plan.mechanism: must be "rr" (got ${plan.mechanism})`);
  const k = plan.domain.size;
  const keep = plan.params.mu;
  return (user) => {
    const x = user.item;
    if (uniform() < keep) return { y: x };
    const r = Math.floor(uniform() * (k - 1));
    return { y: r + (r >= x ? 1 : 0) };
  };
});
