/** One target's figures over every round of a bench run. */
export interface TargetResult {
  name: string;
  description: string;
  /** Figure name -> one value per round (NaN where the round failed or the figure does not apply). */
  rounds: Record<string, number[]>;
  errors: string[];
}
