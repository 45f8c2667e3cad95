-- A report's decision (confirmed, dismissed, lifted), or reports removed, bumps the `code_blocks`
-- cache epoch (accounts migration 0015) in the deciding transaction: every replica reads its
-- confirmed reports again within one poll, even one whose broadcast was lost. A new report, pending,
-- blocks nothing and bumps nothing.
CREATE TRIGGER code_reports_bump_code_blocks AFTER UPDATE OF status ON code_reports
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status) EXECUTE FUNCTION bump_named_cache_epoch('code_blocks');
CREATE TRIGGER code_reports_removed_bump_code_blocks AFTER DELETE ON code_reports
  FOR EACH STATEMENT EXECUTE FUNCTION bump_named_cache_epoch('code_blocks');
