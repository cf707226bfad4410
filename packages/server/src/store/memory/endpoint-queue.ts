/**
 * One endpoint's FIFO queue of job ids. Leaving the queue (a claim, cancel, delete, or a new place after a requeue)
 * does not touch the array: each place carries a stamp (`seq`) that the job's entry keeps, and a place whose job
 * no longer holds that stamp is skipped and dropped as the head passes it.
 */
export class EndpointQueue {
  private places: { id: string; seq: number }[] = [];
  private head = 0;
  private seq = 0;

  /** `live(id, seq)`: the job `id` is still queued at the place stamped `seq`. */
  constructor(private readonly live: (id: string, seq: number) => boolean) {}

  /** Puts the job at the back; returns the place's stamp, for the job's entry to keep. */
  push(id: string): number {
    const seq = ++this.seq;
    this.places.push({ id, seq });
    return seq;
  }

  /** The oldest queued job, taken off the queue. */
  shift(): string | undefined {
    while (this.head < this.places.length) {
      const place = this.places[this.head]!;
      this.head++;
      if (!this.live(place.id, place.seq)) continue;
      this.compact();
      return place.id;
    }
    this.compact();
    return undefined;
  }

  /** Empties the queue; returns the jobs that were queued, oldest first. */
  drain(): string[] {
    const queued: string[] = [];
    for (let i = this.head; i < this.places.length; i++) {
      const place = this.places[i]!;
      if (this.live(place.id, place.seq)) queued.push(place.id);
    }
    this.places = [];
    this.head = 0;
    return queued;
  }

  /** How many queued jobs are ahead of the place stamped `seq`, counting up to `cap`. */
  ahead(seq: number, cap: number): number {
    let ahead = 0;
    // The places are in stamp order from `head`.
    for (let i = this.head; i < this.places.length && ahead < cap; i++) {
      const place = this.places[i]!;
      if (place.seq >= seq) break;
      if (this.live(place.id, place.seq)) ahead++;
    }
    return ahead;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.places.length) {
      this.places = this.places.slice(this.head);
      this.head = 0;
    }
  }
}
