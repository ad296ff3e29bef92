-- Argo CD health of a RepotSchedule (repot.dev/v1alpha1).
-- Degraded: the schedule cannot run (invalid, or its run was rejected), or
-- its last finished run regressed significantly. Suspended: spec.suspend.
-- Healthy: runs are created on schedule. Progressing: not observed yet.
local hs = {}

local function condition(t)
  if obj.status == nil or obj.status.conditions == nil then
    return nil
  end
  for _, c in ipairs(obj.status.conditions) do
    if c.type == t then
      return c
    end
  end
  return nil
end

if obj.status == nil or obj.status.observedGeneration == nil then
  hs.status = "Progressing"
  hs.message = "Waiting for the repot operator to observe the schedule"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the repot operator to observe generation " .. obj.metadata.generation
  return hs
end

local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.reason .. ": " .. stalled.message
  return hs
end
local regressed = condition("Regressed")
if regressed ~= nil and regressed.status == "True" then
  hs.status = "Degraded"
  hs.message = "Regressed: " .. regressed.message
  return hs
end
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: no new run starts"
  return hs
end
local ready = condition("Ready")
if ready ~= nil and ready.status == "True" then
  hs.status = "Healthy"
  hs.message = ready.message
  return hs
end
hs.status = "Progressing"
hs.message = "Waiting for the schedule to become ready"
return hs
