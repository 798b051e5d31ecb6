"""EV2's event-reasoning tasks from the month's timelines: contextual event classification
(CEC, 4-way) and contextual relation reasoning (CRR, 3-way), at instance and schema level."""
