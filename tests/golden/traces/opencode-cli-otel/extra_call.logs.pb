


¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33Î


opencode•	¦i0>ì	Info*M*K

creating instance
4
2{"directory":"/tmp/cap-opencode-project-bht3z9a2"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bR{®wÜZm€Y¦i0>ì‘	!w0>ì	Info*I*G

fromDirectory
4
2{"directory":"/tmp/cap-opencode-project-bht3z9a2"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRßSìÀ@öY!w0>ì‘	á"Î	0>ì	Info*I*G

bootstrapping
4
2{"directory":"/tmp/cap-opencode-project-bht3z9a2"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRA×È¶D°öYá"Î	0>ì 	°•÷0>ì	Info*X*V
	
loading
I
G{"path":"/tmp/cap-opencode-home-co_o20ay/.config/opencode/config.json"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRD^8ÕÈãY°•÷0>ì¢	ƒï0>ì	Info*Z*X
	
loading
K
I{"path":"/tmp/cap-opencode-home-co_o20ay/.config/opencode/opencode.json"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRD^8ÕÈãYƒï0>ì£	¸š0>ì	Info*[*Y
	
loading
L
J{"path":"/tmp/cap-opencode-home-co_o20ay/.config/opencode/opencode.jsonc"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRD^8ÕÈãY¸š0>ì‘	R¦0>ì	Info*I*G
	
loading
:
8{"path":"/tmp/cap-opencode-home-co_o20ay/opencode.json"}2
fiberId˜@JĞÊÇİ8¸L¾{O!»âà
bRcmĞLÚV¾êYR¦0>ì
æ	
¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33¤


opencode_	{ûîE0>ì	Info*
all LSPs are disabled2
fiberIdœ@JĞÊÇİ8¸L¾{O!»âà
bR ÎÁ¶³zIY{ûîE0>ìe	1!H0>ì	Info*
all formatters are disabled2
fiberId@JĞÊÇİ8¸L¾{O!»âà
bR=PAu´ğEY1!H0>ìN	I”H0>ì	Info*
init2
fiberId@JĞÊÇİ8¸L¾{O!»âà
bR=PAu´ğEYI”H0>ìı	×§K„0>ì	Info*³*°
	
created
¢
Ÿ{"id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","slug":"witty-eagle","version":"1.18.33","projectID":"global","directory":"/tmp/cap-opencode-project-bht3z9a2","path":"tmp/cap-opencode-project-bht3z9a2","workspaceID":undefined,"parentID":undefined,"title":"New session - 2026-11-28T15:12:09.512Z","agent":undefined,"model":undefined,"metadata":undefined,"permission":[{"permission":"question","pattern":"*","action":"deny"},{"permission":"plan_enter","pattern":"*","action":"deny"},{"permission":"plan_exit","pattern":"*","action":"deny"}],"cost":0,"tokens":{"input":0,"output":0,"reasoning":0,"cache":{"read":0,"write":0}},"time":{"created":1795878729512,"updated":1795878729512}}2
fiberIdÜJëû´ò;ñ äÙn¯\îtT€R :B“TR8÷Y×§K„0>ì
¼
¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33ú


opencodeZ	Ë49‘0>ì	Info*
event connected2
fiberIdàJıZC\RzÕsÉ&r'|2RÈ›$¾µ,×İYË49‘0>ì	tùç—0>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":0}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòYtùç—0>ì

¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33Ì


opencode‚	<iC1>ì	Info*9*7

shell tool using shell

{"shell":"/usr/bin/bash"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R¿Ìàé0cY<iC1>ì÷	™¡G1>ì	Info*­*ª

stream

š{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"true","agent":"title","mode":"primary"}2
fiberIdêJà£Ï™Ï[³D;Æ#•*‰Rö[–:ê·Y™¡G1>ì¾	?BL1>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdêJà£Ï™Ï[³D;Æ#•*‰Rö[–:ê·Y?BL1>ì
ï
¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33­



opencode»	­lò1>ì	Info*r*p

watcher backend
[
Y{"directory":"/tmp/cap-opencode-project-bht3z9a2","platform":"linux","backend":"inotify"}2
fiberIdşJà£Ï™Ï[³D;Æ#•*‰RõàÂ¹ŞhaxY­lò1>ì…	>ãô1>ì	Info*<*:

project copy refresh started

{"projectID":"global"}2
fiberIdğ‚Jà£Ï™Ï[³D;Æ#•*‰RõàÂ¹ŞhaxY>ãô1>ìœ	krõ1>ì	Info*S*Q

project copy refresh done
2
0{"projectID":"global","updated":[],"removed":[]}2
fiberIdğ‚Jà£Ï™Ï[³D;Æ#•*‰RõàÂ¹ŞhaxYkrõ1>ì¶	“cû1>ì	Info*m*k

booting location services
L
J{"directory":"/tmp/cap-opencode-project-bht3z9a2","workspaceID":undefined}2
fiberIdşJà£Ï™Ï[³D;Æ#•*‰RõàÂ¹ŞhaxY“cû1>ì¶	ÑËÃû1>ì	Info*m*k
	
process
^
\{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","messageID":"msg_222b6c371001LVYRm37tYhMjTg"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R$:xz_‰YÑËÃû1>ì†	^Óû1>ì	Info*¼*¹

stream
¬
©{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"false","agent":"music_store_support","mode":"primary"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R³É4{Y^Óû1>ì¾	õoıû1>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R³É4{Yõoıû1>ì
ô
¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33²


opencodeÒ	@¨O&2>ì	Info*ˆ*…

	evaluated
v
t{"permission":"store_lookup_invoice","pattern":"*","action":{"permission":"store_*","action":"allow","pattern":"*"}}2
fiberId˜„Jà£Ï™Ï[³D;Æ#•*‰R¯/÷Ü(ÌY@¨O&2>ì	ÎRB52>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":1}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòYÎRB52>ì¶	™°"P2>ì	Info*m*k
	
process
^
\{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","messageID":"msg_222b6d38a001zK0QNk0Z3Qj5rI"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖİÁ*±Y™°"P2>ì†	 ƒ¿P2>ì	Info*¼*¹

stream
¬
©{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"false","agent":"music_store_support","mode":"primary"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RçÈTâY ƒ¿P2>ì¾	
ÙP2>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RçÈTâY
ÙP2>ìĞ	R2>ì	Info*†*ƒ

	evaluated
t
r{"permission":"store_lookup_track","pattern":"*","action":{"permission":"store_*","action":"allow","pattern":"*"}}2
fiberIdª„Jà£Ï™Ï[³D;Æ#•*‰RIï­[X¦ù®YR2>ì	OZW2>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":2}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòYOZW2>ì¶	VoT]2>ì	Info*m*k
	
process
^
\{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","messageID":"msg_222b6d5c6001V8me5iXAj1Y6nP"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RN@bSds²ÉYVoT]2>ì†	|@¯]2>ì	Info*¼*¹

stream
¬
©{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"false","agent":"music_store_support","mode":"primary"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R¿_6JÅÏ¦Y|@¯]2>ì¾	nôË]2>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰R¿_6JÅÏ¦YnôË]2>ìÑ	wÅMd2>ì	Info*‡*„

	evaluated
u
s{"permission":"store_lookup_artist","pattern":"*","action":{"permission":"store_*","action":"allow","pattern":"*"}}2
fiberId¼„Jà£Ï™Ï[³D;Æ#•*‰R'ã‰%zPĞYwÅMd2>ì
•
¼
'
deployment.environment.name
latest

opencode.client
cli

opencode.run

00a9b5a4
!
service.instance.id

00a9b5a4

service.name

opencode

service.version	
1.18.33Ó


opencode	ÂTpi2>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":3}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòYÂTpi2>ì¶	Ü”št2>ì	Info*m*k
	
process
^
\{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","messageID":"msg_222b6d6f5001pjXmp3cOqn0xog"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RìQFU¥iT4YÜ”št2>ì†	Îu2>ì	Info*¼*¹

stream
¬
©{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"false","agent":"music_store_support","mode":"primary"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RŸ—“Îøc‡YÎu2>ì¾	V{Lv2>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RŸ—“Îøc‡YV{Lv2>ìÈ	‹«x2>ì	Info**}

	evaluated
n
l{"permission":"store_refund","pattern":"*","action":{"permission":"store_*","action":"allow","pattern":"*"}}2
fiberIdÎ„Jà£Ï™Ï[³D;Æ#•*‰RÜo©¦Y‹«x2>ì	zü%2>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":4}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòYzü%2>ì¶	¢°=‡2>ì	Info*m*k
	
process
^
\{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","messageID":"msg_222b6d861001LmEqR2RxO5S96u"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰Rùv3‘§Y¢°=‡2>ì†	eII‡2>ì	Info*¼*¹

stream
¬
©{"providerID":"scripted","modelID":"scripted-support-model","session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","small":"false","agent":"music_store_support","mode":"primary"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰Rè‡vìYeII‡2>ì¾	òJˆ2>ì	Info*u*s

llm runtime selected
Y
W{"llm.runtime":"ai-sdk","llm.provider":"scripted","llm.model":"scripted-support-model"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰Rè‡vìYòJˆ2>ì	‰X‘2>ì	Info*F*D

loop
:
8{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb","step":5}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòY‰X‘2>ì	§hl‘2>ì	Info*E*C

exiting loop
1
/{"session.id":"ses_ddd4948d7ffeZrYrREMawpb2Lb"}2
fiberIdçJà£Ï™Ï[³D;Æ#•*‰RÖ†[4èîòY§hl‘2>ì—	„&`’2>ì	Info*N*L

disposing instance
4
2{"directory":"/tmp/cap-opencode-project-bht3z9a2"}2
fiberIdã„JdĞØÍóµ«7ˆÜ|]qmRãdÉ6M®jlY„&`’2>ì’	ØV–2>ì	Info*I*G
	
loading
:
8{"path":"/tmp/cap-opencode-home-co_o20ay/opencode.json"}2
fiberIdà„Jà£Ï™Ï[³D;Æ#•*‰RvcŠ-0{ŸŸYØV–2>ì