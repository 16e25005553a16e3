-- Matched signatures (performance bug models) by device model, from uploaded summaries.
SELECT s.device_model AS device_model, g.signature AS signature,
       COUNT(*) AS summaries, SUM(g.matches) AS matches, MAX(g.max_ns) AS max_ns
FROM summary_signatures g JOIN summaries s ON g.summary_id = s.summary_id
GROUP BY s.device_model, g.signature
ORDER BY matches DESC, device_model, signature
