-- Argo CD health of a RepotEvaluation (repot.dev/v1alpha1).
-- Healthy: completed. Degraded: failed, or stalled (needs a person).
-- Suspended: spec.suspend. Progressing: anything else.
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
  hs.message = "Waiting for the repot operator to observe the evaluation"
  return hs
end
if obj.metadata.generation ~= nil and obj.status.observedGeneration < obj.metadata.generation then
  hs.status = "Progressing"
  hs.message = "Waiting for the repot operator to observe generation " .. obj.metadata.generation
  return hs
end

local complete = condition("Complete")
if complete ~= nil and complete.status == "True" then
  hs.status = "Healthy"
  hs.message = complete.message
  return hs
end
local failed = condition("Failed")
if failed ~= nil and failed.status == "True" then
  hs.status = "Degraded"
  hs.message = failed.reason .. ": " .. failed.message
  return hs
end
local stalled = condition("Stalled")
if stalled ~= nil and stalled.status == "True" then
  hs.status = "Degraded"
  hs.message = stalled.reason .. ": " .. stalled.message
  return hs
end
if obj.spec ~= nil and obj.spec.suspend == true then
  hs.status = "Suspended"
  hs.message = "spec.suspend is true: runners are suspended and servers scaled to zero"
  return hs
end

hs.status = "Progressing"
local progress = ""
if obj.status.progress ~= nil and obj.status.progress.text ~= nil then
  progress = ", runs " .. obj.status.progress.text
end
local state = "Pending"
if obj.status.summary ~= nil and obj.status.summary.state ~= nil then
  state = obj.status.summary.state
end
hs.message = state .. progress
return hs
