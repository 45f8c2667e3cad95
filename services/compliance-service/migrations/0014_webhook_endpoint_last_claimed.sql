-- When an endpoint was last given a delivery place (worker.ts, claim). Among an account's endpoints
-- with as few deliveries in flight, the one served longest ago takes the next place: ordered by due
-- time alone, four slow endpoints with an older backlog took every place freed one after another,
-- and the brand's own endpoint, as idle as each of them, waited until their backlog was gone.
ALTER TABLE webhook_endpoints ADD COLUMN last_claimed_at timestamptz;
