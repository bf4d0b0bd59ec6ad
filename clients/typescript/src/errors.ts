/** A plan the client cannot use (unreadable, wrong version, bad field, weaker than claimed): one line naming the field, the rule and the value. */
export class PlanError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PlanError";
  }
}
