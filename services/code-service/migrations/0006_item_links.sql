-- A brand's links for its items (docs/RESOLVER.md, "Links"): per GTIN, or only for a lot (AI 10) or a
-- serial (AI 21) of it. Each change is an event in the account's stream, this row written in its transaction.
CREATE TABLE item_links (
  id text PRIMARY KEY,
  account_id text NOT NULL,
  environment text NOT NULL CHECK (environment IN ('test', 'live')),
  gtin text NOT NULL,
  lot text,
  serial text,
  link_type text NOT NULL,
  href text NOT NULL,
  title text NOT NULL,
  media_type text NOT NULL,
  hreflang jsonb NOT NULL DEFAULT '[]',
  is_default boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX item_links_by_item ON item_links (environment, gtin, account_id);
CREATE INDEX item_links_by_owner ON item_links (account_id, environment, created_at DESC, id DESC);
-- One default link per item (the same GTIN, lot and serial) of an account.
CREATE UNIQUE INDEX item_links_one_default ON item_links (account_id, environment, gtin, coalesce(lot, ''), coalesce(serial, ''))
  WHERE is_default;
