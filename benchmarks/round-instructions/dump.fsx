// Writes the expanded round script of a built WorkQueue.AspNetCore.dll (args: dll, output file); see run.sh.
let asm = System.Reflection.Assembly.LoadFrom(fsi.CommandLineArgs.[1])
let t = asm.GetType("WorkQueue.AspNetCore.Durable.DurableScripts")
let v = t.GetField("Round", System.Reflection.BindingFlags.Static ||| System.Reflection.BindingFlags.Public ||| System.Reflection.BindingFlags.NonPublic).GetValue(null) :?> string
System.IO.File.WriteAllText(fsi.CommandLineArgs.[2], v)
