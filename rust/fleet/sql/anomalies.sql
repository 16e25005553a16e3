-- Anomalies by device model: traces per reason, with the traces' total call count.
SELECT t.device_model AS device_model, t.reason AS reason,
       COUNT(*) AS traces, SUM(t.calls) AS calls
FROM traces t
GROUP BY t.device_model, t.reason
ORDER BY traces DESC, device_model, reason
